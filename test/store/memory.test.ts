import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { describeTaskStore } from '../../src/testing.js';

describeTaskStore('memory', async () => createMemoryTaskStore());
