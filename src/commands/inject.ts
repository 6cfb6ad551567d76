// Placeholder until the inject subcommand lands.
import type { Command } from './command.js';

export const injectCommand: Command = {
  name: 'inject',
  summary: '(not yet available)',
  usage: 'osm-healthcheck inject: not yet available',
  run: async () => {
    throw new Error('inject is not implemented yet');
  },
};
