# syntax=docker/dockerfile:1
# The images of the browser agent service, one target each (docs/images.md):
#   docker build --target gateway -t bas/gateway:0.1.0 .
# gateway, sessions, runner, billing, browser-pool: a service as compiled JavaScript (`npm run build`) on Node 24 with
# the production dependencies only; chromium: one browser of browser-pool's Kubernetes driver (a pod per browser).
# Every image runs as uid 1000 under tini, and works on a read-only root with /tmp writable.
# Written where no Docker engine runs: never built there; test/build/dockerfile.test.ts checks its invariants.

ARG NODE_IMAGE=node:24-bookworm-slim
ARG DEBIAN_IMAGE=debian:bookworm-slim

# ---- What the five service images share: tini and the production dependencies ----------------------------------
# The services' images are built on this stage itself rather than copying its node_modules into another: an engine
# checks a COPY --from against its cache by hashing every file copied (387 MB, about 11 s per image with Podman).
FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Only the root's dependencies: the workspaces are bundled into the services, so they are left out (no @bas links).
# No install scripts: none of these packages needs its own at run time (esbuild's serves tsx only, @scarf/scarf's
# phones home), nor does the build below (esbuild finds its platform's binary without its script).
# npm ci takes this lock as it is (checked with `npm ci --dry-run`); should a lock written against a registry mirror
# lack other platforms' optional builds, npm ci refuses it (see .ci/run) and these two lines need `npm install`.
# The secret `ca-certificates` (optional: `npm run images` passes the host's bundle) is for a registry behind a proxy
# that inspects TLS; it is read during the build only and stays out of the image.
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=ca-certificates \
    NODE_EXTRA_CA_CERTS=/run/secrets/ca-certificates \
    npm ci --omit=dev --workspaces=false --ignore-scripts --no-audit --no-fund

# ---- The compiled services: dist/<name>/main.js, dist/grpc-health-probe.js --------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# All of the source (less what .dockerignore leaves out) before npm ci: the workspaces must be there to be linked.
COPY . .
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=ca-certificates \
    NODE_EXTRA_CA_CERTS=/run/secrets/ca-certificates \
    npm ci --ignore-scripts --no-audit --no-fund && npm run build

# ---- The base of the five service images -----------------------------------------------------------------------
FROM deps AS service
# In a container, loopback is the container's alone: serve gRPC on every address (the chart sets it as well).
ENV GRPC_HOST=0.0.0.0
COPY --from=build /app/dist/grpc-health-probe.js /app/dist/grpc-health-probe.js.map ./dist/
# The image's own user (node, uid 1000), by number so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--"]
# The gRPC services answer grpc.health.v1 on GRPC_PORT; the gateway replaces this with GET /healthz.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s CMD ["node", "dist/grpc-health-probe.js"]

FROM service AS gateway
COPY --from=build /app/dist/gateway ./dist/gateway
ENV PORT=8080 GRPC_PORT=50050
# REST and the live view; gRPC (ProjectAdmin); metrics.
EXPOSE 8080 50050 9460
# 200 only when every service and the event store answer: an unhealthy gateway says what is down.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/gateway/main.js"]

FROM service AS sessions
COPY --from=build /app/dist/sessions ./dist/sessions
ENV GRPC_PORT=50051
# The temporary mailboxes' SMTP receiver (docs/mailbox.md): mail comes from outside the container.
ENV SMTP_HOST=0.0.0.0
EXPOSE 50051 9461 2525
CMD ["node", "--enable-source-maps", "dist/sessions/main.js"]

FROM service AS runner
# Code-mode scripts run in a bubblewrap sandbox, bridged to their browser by socat (where user namespaces allow it).
USER root
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap socat \
    && rm -rf /var/lib/apt/lists/*
USER 1000:1000
COPY --from=build /app/dist/runner ./dist/runner
ENV GRPC_PORT=50053
EXPOSE 50053 9463
CMD ["node", "--enable-source-maps", "dist/runner/main.js"]

FROM service AS billing
COPY --from=build /app/dist/billing ./dist/billing
ENV GRPC_PORT=50054
EXPOSE 50054 9464
CMD ["node", "--enable-source-maps", "dist/billing/main.js"]

FROM service AS browser-pool
# Chromium, fonts for Latin, CJK and emoji pages, and ffmpeg for recordings; for the local driver (browsers in
# bubblewrap sandboxes on this container) also bubblewrap, socat, util-linux (setpriv), perl-base (the CDP relays; in
# every Debian image already) and iproute2 (ss), as scripts/setup.sh installs.
USER root
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        chromium fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji ffmpeg \
        bubblewrap socat util-linux perl-base iproute2 \
    && rm -rf /var/lib/apt/lists/*
USER 1000:1000
COPY --from=build /app/dist/browser-pool ./dist/browser-pool
# Browsers' profiles, downloads and recordings (BROWSER_DATA_DIR) and Chromium's own folders go under /tmp.
ENV GRPC_PORT=50052 CDP_PORT=9223 CDP_HOST=0.0.0.0 CHROMIUM_PATH=/usr/bin/chromium \
    XDG_CONFIG_HOME=/tmp/xdg/config XDG_CACHE_HOME=/tmp/xdg/cache
# gRPC; the CDP proxy (cdpUrl, live view); metrics. The Kubernetes driver's egress proxies listen from
# K8S_EGRESS_PORT_BASE (20000) on, one port per browser.
EXPOSE 50052 9223 9462
CMD ["node", "--enable-source-maps", "dist/browser-pool/main.js"]

# ---- One browser pod of the Kubernetes driver (browserPool.browserPod.image) -------------------------------------
FROM ${DEBIAN_IMAGE} AS chromium
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        chromium fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji ffmpeg socat tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 1000 --user-group --no-create-home --home-dir /tmp chromium
# file:// blocked and no model manifest fetched, as in the local driver's sandboxes: the very files it reads (the
# manifest's path is MODEL_MANIFEST_PATH of services/browser-pool/src/adapters/chromium-features.ts). Nothing of the
# build stage: this image needs no npm install.
COPY services/browser-pool/chromium/policies.json /etc/chromium/policies/managed/bas.json
COPY services/browser-pool/chromium/model-manifest.json /etc/chromium/model-manifest.json
COPY --chmod=755 deploy/image/chromium-pod.sh /usr/local/bin/chromium-pod
ENV HOME=/tmp DEVTOOLS_PORT=9222
USER 1000:1000
EXPOSE 9222
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/chromium-pod"]
HEALTHCHECK --interval=15s --timeout=5s --start-period=15s \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/$DEVTOOLS_PORT && printf 'GET /json/version HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && grep -q webSocketDebuggerUrl <&3"]

# ---- NATS and Postgres for `npm run start:containers` (a deployment brings its own; the chart's values name them) --
FROM ${DEBIAN_IMAGE} AS nats
RUN apt-get update \
    && apt-get install -y --no-install-recommends nats-server tini \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir /data && chown 1000:1000 /data
USER 1000:1000
ENV NATS_PORT=4222
EXPOSE 4222
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["sh", "-c", "exec nats-server --jetstream --store_dir /data --addr 127.0.0.1 --port \"$NATS_PORT\""]
HEALTHCHECK --interval=15s --timeout=5s CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/$NATS_PORT"]

FROM ${DEBIAN_IMAGE} AS postgres
# The postgres user first, with a fixed number (the package takes it as it finds it).
RUN groupadd --system --gid 999 postgres \
    && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql --shell /bin/bash postgres \
    && apt-get update \
    && apt-get install -y --no-install-recommends postgresql tini \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir /data && chown postgres:postgres /data
COPY --chmod=755 deploy/image/postgres.sh /usr/local/bin/postgres-entrypoint
# Debian's postgres user, by number for runAsNonRoot.
USER 999:999
ENV PGPORT=5432 PGDATA=/data/pgdata POSTGRES_DB=bas
EXPOSE 5432
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/postgres-entrypoint"]
HEALTHCHECK --interval=15s --timeout=5s CMD ["sh", "-c", "pg_isready -h 127.0.0.1 -p \"$PGPORT\""]
