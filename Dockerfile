# Lens: the server, the sandbox agent and the web app, built in one stage and copied
# into a small one. Built by `docker compose build` (compose.yaml) or
# `docker build -t lens:local .`.
#
# Where the base images cannot be pulled, the runtime stage can be fed otherwise, as
# scripts/compose-sandbox does with podman: binaries built on the host as the `build`
# stage (a folder with src/target/release/{lens,lens-sandbox-agent} and src/dist), and a
# local Debian bookworm as the base:
#   podman build --build-context build=FOLDER --build-arg RUNTIME_BASE=IMAGE -t lens:local .
ARG RUNTIME_BASE=debian:bookworm-slim

FROM rust:1.95-bookworm AS build
WORKDIR /src
# The web app's tools, at the versions scripts/setup pins.
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm gzip && rm -rf /var/lib/apt/lists/* \
    && rustup target add wasm32-unknown-unknown \
    && cargo install trunk --version 0.21.14 --locked \
    && cargo install wasm-bindgen-cli --version 0.2.130 --locked \
    && mkdir -p /opt/binaryen && cd /opt/binaryen && npm install --no-audit --no-fund --save-exact binaryen@132.0.0
ENV PATH="/opt/binaryen/node_modules/.bin:${PATH}"
COPY . .
RUN cargo fetch --locked \
    && PATH="$PWD/scripts/trunk-cargo:$PATH" trunk build --release --locked \
    && cargo build --release --locked -p lens-server -p lens-sandbox-agent

FROM ${RUNTIME_BASE}
# ca-certificates: the model's HTTPS. bubblewrap and python3 for sandboxes on this
# machine where the container is allowed them; under Compose they run on the gateway.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates bubblewrap python3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/lens --shell /usr/sbin/nologin lens \
    && mkdir -p /var/lib/lens/data /var/lib/lens/openshell && chown -R lens:lens /var/lib/lens
COPY --from=build /src/target/release/lens /usr/local/bin/lens
COPY --from=build /src/target/release/lens-sandbox-agent /usr/local/bin/lens-sandbox-agent
COPY --from=build /src/dist /usr/share/lens/dist
USER lens
ENV LENS_ADDR=0.0.0.0:8080 LENS_DATA=/var/lib/lens/data LENS_WEB_DIST=/usr/share/lens/dist
EXPOSE 8080 8081
VOLUME ["/var/lib/lens/data"]
ENTRYPOINT ["lens"]
CMD ["serve"]
