# The osm-healthcheck image: the companion (`serve`, the default command) and the init step (`init`) in one.
# scripts/image-build.sh runs these same steps without a Docker engine; test/image/ keeps the two in step.

ARG NODE_IMAGE=node:24-bookworm-slim

# Build: the production dependencies plus esbuild, the only dev tool the build runs, checked against the lock
# by npm ci. Linter, test runner and type checker stay out of the image build.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN esbuild="$(npm pkg get devDependencies.esbuild)" \
 && npm pkg delete devDependencies \
 && npm pkg set "devDependencies.esbuild=${esbuild}" --json \
 && npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/bundle-options.mjs scripts/
COPY src src
RUN node scripts/build.mjs

# Runtime dependencies, production only. dist/ (cli.mjs and one file per command) bundles everything except gRPC,
# which serve loads from node_modules when the probe table has a gRPC entry (grpc-health-check reads its .proto
# from its package).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm pkg delete devDependencies \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
# iptables brings both backends (iptables-nft*, iptables-legacy*) and ip6tables for `init`; tini reaps and
# forwards SIGTERM so `serve` drains.
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/package.json package.json
COPY --from=deps /app/node_modules node_modules
COPY --from=build /src/dist dist
COPY init init
EXPOSE 15901 15902 15903 15904
# Non-root by default, as the companion runs; the init container sets runAsUser: 0 in the pod spec.
USER 65532:65532
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/cli.mjs"]
CMD ["serve"]
