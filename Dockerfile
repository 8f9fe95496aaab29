# mcp-confirm-audit in a container, for auditing a server someone else runs, by its URL:
#
#   docker build -t mcp-confirm-audit .
#   docker run --rm --network host --user "$(id -u):$(id -g)" \
#     -v /srv/served:/srv/served -v "$PWD/mcp-audit:/out" \
#     mcp-confirm-audit --mcp-target http://127.0.0.1:8000/mcp --mcp-root /srv/served --mcp-report-dir /out
#
# The served directory is mounted at the same path the server sees, so the cases the
# harness makes in it are the files the server acts on. The audit runs as an
# unprivileged user with nothing of the host but the two mounts; a server the
# harness starts itself belongs beside the audit (pip install, or the GitHub Action).
FROM python:3.12-slim

ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY mcp_confirm_audit ./mcp_confirm_audit
COPY attacks ./attacks
RUN pip install . && rm -rf /src \
    && useradd --create-home --uid 10001 audit
USER audit
WORKDIR /home/audit
# Everything after the image's name goes to pytest, the plugin's --mcp-* options included.
ENTRYPOINT ["mcp-confirm-audit", "run", "--"]
