export { createMemoryTaskStore, type MemoryTaskStoreOptions } from './store.js';
