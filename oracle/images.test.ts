import { describe, expect, it } from 'vitest';
import { imageName, imageTable, programOf } from './images.js';

describe('images the oracle runs as programs', () => {
  const table = imageTable('/bin-dir', { 'local-game': '/opt/game' });

  it('are known by their name without registry, path, tag or digest', () => {
    expect(imageName('us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41')).toBe('simple-game-server');
    expect(imageName('agones-sdk@sha256:0123')).toBe('agones-sdk');
    expect(imageName('localhost:5000/local-game')).toBe('local-game');
  });

  it("run the built binary with the container's args, or its command when it names the entrypoint", () => {
    expect(programOf({ image: 'x/simple-game-server:1', args: ['-udp'] }, table)).toEqual({ argv: ['/bin-dir/simple-game-server', '-udp'] });
    expect(programOf({ image: 'x/simple-game-server:1', command: ['/server'], args: ['-a'] }, table)).toEqual({ argv: ['/bin-dir/simple-game-server', '-a'] });
    expect(programOf({ image: 'x/simple-game-server:1', command: ['/usr/bin/env', 'X=1'] }, table)).toEqual({ argv: ['/usr/bin/env', 'X=1'] });
    expect(programOf({ image: 'local-game' }, table)).toEqual({ argv: ['/opt/game'] });
  });

  it('put a program that looks for files beside itself at its entrypoint in the container', () => {
    expect(programOf({ image: 'r/agones-extensions:1.57.0' }, table)).toEqual({ argv: ['/extensions'], mount: { target: '/extensions', source: '/bin-dir/extensions' } });
  });

  it('refuse an image they have no program for, naming it', () => {
    expect(programOf({ image: 'example.com/nope:1' }, table)).toEqual({ error: expect.stringContaining('image "example.com/nope:1" is not one the oracle can run') });
  });
});
