# Target for the harbor_modules scenario (and, started a second time, its
# "runtime container"): Debian 13 with the docker CLI, Compose v2 and Harbor.
# Stand-in until the runtime_image role's aisbench/agent-runtime image exists.
# Build context: this file plus ca-certificates/ (the scenario copies the
# host's extra CA certificates there: PyPI may sit behind a TLS proxy).
FROM local/debian:13-minbase
COPY ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates docker-cli docker-compose python3 python3-venv procps >/dev/null \
 && update-ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*
ARG HARBOR_VERSION=0.25.0
RUN python3 -m venv /opt/harbor \
 && PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
      /opt/harbor/bin/pip install -q --no-cache-dir "harbor==${HARBOR_VERSION}" \
 && ln -s /opt/harbor/bin/harbor /usr/local/bin/harbor \
 && harbor --version
ARG DOCKERFILE_SHA=unknown
LABEL org.aisbench.test.dockerfile-sha=${DOCKERFILE_SHA}
CMD ["sleep", "infinity"]
