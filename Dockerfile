# The osm-healthcheck image: the companion (`serve`, the default command) and the init step (`init`) in one.
# scripts/image-build.sh runs these same steps without a Docker engine; test/image/ keeps the two in step.
# Every node pulls it before its first meshed pod starts, so the final stage holds only what runs
# (BENCHMARKS.md "Image size and start-up"): on an empty base, the files of the Debian packages that run
# (iptables, nftables, tini, a shell, coreutils, glibc and libstdc++), Node's binary, the bundled dist/ and serve's
# supervisor.

# Both bases are arguments with public defaults, so a builder without Docker Hub can pass local ones.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG DEBIAN_IMAGE=debian:bookworm-slim

# Build: the production dependencies plus esbuild, the only dev tool the build runs, checked against the lock
# by npm ci. Linter, test runner and type checker stay out of the image build. The build bundles every
# dependency into dist/ (prom-client's exposition into its own file, loaded on the first scrape; gRPC probes need
# none: node:http2), and writes serve's V8 code cache with this
# stage's Node: the very binary the final stage copies, so the cache is taken.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN esbuild="$(npm pkg get devDependencies.esbuild)" \
 && npm pkg delete devDependencies \
 && npm pkg set "devDependencies.esbuild=${esbuild}" --json \
 && npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/bundle-options.mjs scripts/code-cache.mjs scripts/third-party.mjs scripts/
COPY licenses licenses
COPY src src
RUN node scripts/build.mjs

# What the final stage takes from the Node base, and only that: not npm, npx, corepack or yarn, which nothing runs.
# Node's binary, stripped of its symbol table and debug information (Node 24.21: 126.6 -> 108.5 MB; V8 and the
# code cache are the same, only native stack traces lose C++ names).
FROM ${NODE_IMAGE} AS node
RUN apt-get update \
 && apt-get install -y --no-install-recommends binutils \
 && strip --strip-all /usr/local/bin/node

# What runs besides Node, as files of Debian packages: iptables brings both backends (iptables-nft*,
# iptables-legacy*) and ip6tables for `init` and the node agent; nftables brings nft, the node agent's native
# nftables backend (`node --backend nftables`, what auto picks where kube-proxy runs in nftables mode); tini reaps and forwards SIGTERM so `serve` drains; dash is /bin/sh,
# which runs serve's supervisor (image/supervise.sh), and coreutils has `sleep` (the webhook's preStop hook runs
# `sleep 10`) and `date` (the supervisor's log lines); libc6, libstdc++6 and libgcc-s1 are what
# Node's binary links against; netbase has /etc/protocols, which iptables and nft read. ca-certificates for its bundle
# only. scripts/runtime-root.sh lays out exactly those packages' files and their dependencies' in /rootfs, with
# a dpkg status listing them; no dpkg, apt, debconf or perl, which only installing packages needs.
FROM ${DEBIAN_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables nftables tini ca-certificates
COPY scripts/runtime-root.sh /usr/local/bin/runtime-root.sh
RUN runtime-root.sh /rootfs iptables nftables tini dash coreutils libc6 libstdc++6 libgcc-s1 netbase

# The image's SBOM (CycloneDX 1.6, scripts/sbom.mjs), read off exactly what the final stage takes from the stages
# above: the runtime root's dpkg status, copyright files and os-release, Node's binary (this base's version) and
# dist/ (its THIRD-PARTY-NOTICES names the bundled npm packages; every file with its SHA-256). SOURCE_DATE_EPOCH,
# when given (BuildKit passes it on), dates it; nothing else in it changes between two builds of one commit.
FROM ${NODE_IMAGE} AS sbom
ARG SOURCE_DATE_EPOCH
COPY --from=runtime /rootfs/var/lib/dpkg/status /image/var/lib/dpkg/status
COPY --from=runtime /rootfs/usr/share/doc /image/usr/share/doc
COPY --from=runtime /rootfs/usr/lib/os-release /image/usr/lib/os-release
COPY --from=node /usr/local/bin/node /image/usr/local/bin/node
COPY --from=build /src/dist /image/app/dist
COPY package.json /src/
COPY scripts/sbom.mjs scripts/third-party.mjs /src/scripts/
RUN node /src/scripts/sbom.mjs --rootfs /image --node-version "$(node --version)" > /sbom.cdx.json

# An empty base: only the runtime root, Node's binary, dist/, init/, supervise.sh and /osm-healthcheck, and what a
# copy owes or tells: Node's license (the official build's, beside it in the Node base), the project's, the SBOM.
FROM scratch
COPY --from=runtime /rootfs /
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/LICENSE /usr/local/share/doc/node/LICENSE
# Debian's PATH, which an empty base does not set: the entrypoint finds node, and init the iptables tools, on it.
# MALLOC_ARENA_MAX=1: glibc's malloc keeps one arena, not one per thread that ever allocated (V8's compiler and
# GC threads, libuv's pool), whose freed pages stay resident: ~1.6 MiB less private memory per companion at the
# same probe throughput (BENCHMARKS.md, "Memory per companion against a raw node:http server"). No V8 flag here:
# under a memory limit supervise.sh gives serve --max-heap-size at half of it (BENCHMARKS.md, "Supervision: what
# the supervisor costs"), and the flags that save more memory cost throughput (--lite-mode: 0.36x).
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_ENV=production MALLOC_ARENA_MAX=1
WORKDIR /app
COPY --from=build /src/dist dist
COPY --from=sbom /sbom.cdx.json sbom.cdx.json
COPY LICENSE LICENSE
COPY init init
COPY image/supervise.sh supervise.sh
# osm-edge's and OSM's healthcheck container runs `command: [/osm-healthcheck]`, which replaces the entrypoint: this
# script execs the same tini and supervisor, with serve in their mode (docs/serve.md, "osm-edge's healthcheck
# container"). Executable in the checkout, so COPY keeps its mode.
COPY image/osm-healthcheck /osm-healthcheck
EXPOSE 15901 15902 15903 15904
# Non-root by default, as the companion runs; the init container sets runAsUser: 0 in the pod spec.
USER 65532:65532
# tini is PID 1 (reaps, forwards signals); supervise.sh execs every subcommand but `serve`, which it runs as its
# child and restarts at once when it exits unasked: a crash, a kill, V8's heap error (docs/companion-failures.md).
ENTRYPOINT ["/usr/bin/tini", "--", "/app/supervise.sh", "node", "/app/dist/cli.mjs"]
CMD ["serve"]
