// A find-my-way route constraint on the listener a connection came in on, so each kind's probe routes answer only
// on that kind's port (docs/architecture.md#serve-routes-and-verdicts) and Fastify's not-found handler answers the rest.

import type { IncomingMessage, Server } from 'node:http';
import type { FastifyRouterOptions } from 'fastify';
import { LISTENER_ROLES, type ListenerRole } from '../scheme.js';

type Strategy = NonNullable<FastifyRouterOptions<Server>['constraints']>[string];
type Store = ReturnType<ReturnType<Strategy['storage']>['get']>;

export function listenerConstraint(roleOf: (req: IncomingMessage) => ListenerRole | undefined): Strategy {
  return {
    name: 'listener',
    storage() {
      const stores = new Map<string, NonNullable<Store>>();
      return {
        get: (role) => stores.get(role) ?? null,
        set: (role, store) => {
          stores.set(role, store);
        },
      };
    },
    // undefined (a connection no listener handed over) matches only the routes without the constraint.
    deriveConstraint: (req) => roleOf(req) as string,
    validate(value) {
      if (!(LISTENER_ROLES as readonly unknown[]).includes(value)) {
        throw new TypeError(
          `listener constraint must be one of ${LISTENER_ROLES.join(', ')}, got ${String(value)}`,
        );
      }
    },
    // Routes without the constraint (/osm-healthcheck) still answer on every listener.
    mustMatchWhenDerived: false,
  };
}
