import { warmUpTestDatabase } from '@holdfast/pg/testing';
import { beforeAll } from 'vitest';

// Runs before every test file. The first file of each worker process boots the PGlite that the
// process's files then share (createTestDatabase gives each file its own schema); later files
// find it booted. On PostgreSQL (DATABASE_URL) there is nothing to boot.
beforeAll(() => warmUpTestDatabase(), 180_000);
