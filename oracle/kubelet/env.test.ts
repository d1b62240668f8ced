import { describe, expect, it } from 'vitest';
import { expand } from './env.js';

describe("a container's $(VAR) references", () => {
  it('become the values of names defined before; the rest stays as written; $$ escapes', () => {
    const env = { PORT: '7654', HOST: 'h' };
    expect(expand('$(HOST):$(PORT)', env)).toBe('h:7654');
    expect(expand('$(MISSING) $PORT', env)).toBe('$(MISSING) $PORT');
    expect(expand('$$(PORT)', env)).toBe('$(PORT)');
  });
});
