# The cubesage API image used by compose.yaml.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml constraints.txt README.md ./
COPY cubesage_core cubesage_core
COPY cube_models cube_models
COPY fourengine fourengine
COPY sag_index sag_index
COPY router router
COPY answer answer
COPY bench bench
COPY demo demo
RUN pip install --no-cache-dir -c constraints.txt .
ENV CUBESAGE_DEMO_DIR=/app/demo CUBESAGE_MODEL_DIR=/app/demo/model
EXPOSE 8088
CMD ["cubesage", "serve", "--host", "0.0.0.0", "--port", "8088"]
