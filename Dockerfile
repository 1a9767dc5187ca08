# FlowStack image: build on the official Swift image, run on slim Debian with the C libraries
# (libmicrohttpd, SQLite, libpq for a PostgreSQL database, zlib for gzip answers, jemalloc, the server's malloc,
# and Graphviz's libgvc, whose postinst registers its layout plugins).
# docker build -t flowstack . && docker run -p 8080:8080 -v flowstack-data:/data flowstack
# On PostgreSQL: docker run -p 8080:8080 -e FLOWSTACK_DB='postgresql://flowstack@db:5432/flowstack' flowstack

FROM swift:6.3-bookworm AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev libgraphviz-dev libpq-dev zlib1g-dev libjemalloc-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so a source change does not refetch them.
# (the engine, JSON and client package is a path dependency: its manifest is needed to resolve)
COPY Package.swift ./
COPY clients/swift/Package.swift clients/swift/
RUN swift package resolve
COPY Plugins Plugins
COPY Sources Sources
COPY clients/swift/Sources clients/swift/Sources
COPY Tests Tests
# migrations/, flows/, flags/, schemas/, playground/, the JavaScript package's modules (served
# under /sdk/) and openapi.yaml are embedded in the binary at build time.
COPY migrations migrations
COPY flows flows
COPY flags flags
COPY schemas schemas
COPY playground playground
COPY clients/js/src clients/js/src
COPY openapi.yaml ./
RUN swift build -c release --product flowstack --static-swift-stdlib \
    && install -D "$(swift build -c release --show-bin-path)/flowstack" /out/flowstack

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libpq5 libgvc6 zlib1g libjemalloc2 curl ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin flowstack \
    && mkdir -p /data && chown flowstack:flowstack /data
COPY --from=builder /out/flowstack /usr/local/bin/flowstack
USER flowstack
WORKDIR /data
VOLUME ["/data"]
# Several containers on one PostgreSQL (FLOWSTACK_DB=postgresql://…): give each the address the
# others reach it at, FLOWSTACK_NODE_URL=http://<its name on the network>:8080, and each owns
# sessions under leases, reading them from memory (docs/operations.md, Running several nodes).
ENV FLOWSTACK_DB=/data/flowstack.sqlite \
    FLOWSTACK_PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD curl -fsS "http://127.0.0.1:${FLOWSTACK_PORT:-8080}/healthz" || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["flowstack"]
CMD ["serve", "--host", "0.0.0.0"]
