# The refresh CronJob's image. It cannot be built on the project's own machines (no container
# engine there); build it in CI elsewhere with: docker build -t ghcr.io/truegreen/truegreen:0.1.0 .
FROM python:3.12.8-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md /src/
COPY src /src/src
RUN pip install /src && rm -rf /src
USER 65532:65532
ENTRYPOINT ["truegreen"]
