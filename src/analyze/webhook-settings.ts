// What the deployed webhook injects with, read from its Deployment's container by the webhook's own flag table
// (webhook/settings.ts), so analyze asks the rewrite exactly what the running webhook would decide: the image,
// the placement, the Pod Security default, the CPU limit (`0.5` as the webhook stores it, `500m`), the gate.

import { UsageError } from '../errors.js';
import {
  type CompanionSettings,
  companionSettings,
  type WebhookArgs,
  webhookArgs,
} from '../webhook/settings.js';
import { asList, asObject } from './json.js';
import type { Json } from './kube-client.js';

export interface WebhookSettings extends CompanionSettings {
  /** Each flag or variable that could not be read, and what was assumed instead. */
  problems: string[];
}

/** The webhook's container in its Deployment: the one running `webhook`. */
export function webhookContainer(deployment: Json): Json | undefined {
  const spec = asObject(asObject(asObject(deployment.spec).template).spec);
  return asList(spec.containers).find((c) => Array.isArray(c.args) && c.args[0] === 'webhook');
}

/** The container's args and env read by the webhook's own table; args it would refuse leave only the env. */
function containerArgs(container: Json, problems: string[]): WebhookArgs {
  const args = Array.isArray(container.args) ? container.args.slice(1).map(String) : [];
  const env = Object.fromEntries(
    asList(container.env).flatMap((e) =>
      typeof e.name === 'string' && typeof e.value === 'string' ? [[e.name, e.value]] : [],
    ),
  );
  try {
    return webhookArgs(args, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    problems.push(`its args: ${err.message}; only its environment read`);
    return webhookArgs([], env);
  }
}

export function webhookSettings(deployment: Json): WebhookSettings {
  const container = webhookContainer(deployment) ?? {};
  const problems: string[] = [];
  const args = containerArgs(container, problems);
  const companion = companionSettings(args, problems);
  // Without --image the webhook adds its own release's image, which analyze's release cannot name: the
  // container's image is that release.
  const ownImage =
    args('image') === undefined && typeof container.image === 'string' ? container.image : undefined;
  return {
    ...companion,
    ...(ownImage === undefined ? {} : { image: ownImage }),
    problems,
  };
}
