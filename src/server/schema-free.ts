// The companion's routes take no schema. Given these compilers, Fastify never requires its defaults (Ajv and
// fast-json-stringify, the bulk of its start-up), and scripts/build.mjs leaves them out of serve's bundle.

function noSchemas(): never {
  throw new Error('the companion routes take no schema: no validator or serializer compiler is loaded');
}

export const LEAN_SCHEMA_CONTROLLER = {
  compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas },
};
