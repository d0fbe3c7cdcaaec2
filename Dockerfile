# syntax=docker/dockerfile:1
# govtrail: multi-stage image. The build stage compiles TypeScript with the dev dependencies; the
# runtime stage holds only production dependencies, the compiled code, the SQL migrations and the
# default rule pack, and runs as an unprivileged user.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the "prepare" script compiles, and the sources are not copied yet.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle-vendor.mjs ./scripts/
COPY rules ./rules
# The binary runs itself: its first line (#!/usr/bin/env -S …) carries govtrail's Node flags and
# MALLOC_ARENA_MAX (docs/deploy.md, "Memory").
RUN npm run build && chmod 755 dist/src/main.js

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    GOVTRAIL_HTTP_PORT=9464 \
    GOVTRAIL_DATA_DIR=/var/lib/govtrail
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY sql ./sql
COPY rules ./rules
COPY baselines ./baselines
# The embedded database (used only without DATABASE_URL) lives in a volume the user owns.
RUN mkdir -p /var/lib/govtrail && chown node:node /var/lib/govtrail
VOLUME ["/var/lib/govtrail"]
# The image's built-in unprivileged user (uid 1000).
USER node
EXPOSE 9464
# No curl in the slim image: node itself asks /healthz. 503 (a tenant failing its last runs, or
# the database gone) marks the container unhealthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GOVTRAIL_HTTP_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM goes straight to node (exec form; env execs node, which stays PID 1): the worker drains
# within GOVTRAIL_SHUTDOWN_GRACE. The binary itself, not `node dist/src/main.js`: its first line
# starts node with govtrail's memory settings (src/main.ts, src/runtime/launch.ts).
ENTRYPOINT ["/app/dist/src/main.js"]
CMD ["worker"]
