export { createMemoryTaskStore } from './store.js';
