// The restart count the image's supervisor (image/supervise.sh) hands each serve it starts: how many times serve
// exited and was started again in this container. Unset when serve runs unsupervised (npm, `node dist/cli.mjs`).

import { badFlagValue } from '../flags.js';
import { RESTARTS_ENV } from '../scheme.js';

export function parseRestarts(text: string | undefined): number {
  if (text === undefined) return 0;
  const restarts = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(restarts)) {
    throw badFlagValue(
      `env ${RESTARTS_ENV}`,
      text,
      "a whole number, 0 or more, as the image's supervisor sets it",
    );
  }
  return restarts;
}
