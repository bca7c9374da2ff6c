import { MemoryIdempotencyStore } from '../src/index';
import { storeBehaviour } from './store-suite';

storeBehaviour('MemoryIdempotencyStore', () => new MemoryIdempotencyStore());
