// No route of ours takes a schema (the companion's, the webhook's). Given these compilers, Fastify never requires
// its defaults (Ajv and fast-json-stringify, the bulk of its start-up), and scripts/build.mjs leaves them out of
// both bundles.

function noSchemas(): never {
  throw new Error('our routes take no schema: no validator or serializer compiler is loaded');
}

export const LEAN_SCHEMA_CONTROLLER = {
  compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas },
};
