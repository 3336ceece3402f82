/**
 * Whether and where spans are exported over OTLP/HTTP (config `observability.otlp` or the standard
 * OTEL_EXPORTER_OTLP_* variables). Kept apart from the exporter so that a server without export never
 * loads the OpenTelemetry packages.
 */
export interface OtlpConfig {
  endpoint: string;
  headers?: Record<string, string>;
}

/** The OTLP settings from the config section or the environment; undefined when export is off. */
export function resolveOtlpConfig(section: unknown, env: NodeJS.ProcessEnv): OtlpConfig | undefined {
  const otlp = section && typeof section === 'object' ? (section as { otlp?: unknown }).otlp : undefined;
  if (otlp && typeof otlp === 'object' && typeof (otlp as OtlpConfig).endpoint === 'string') {
    const c = otlp as OtlpConfig;
    return { endpoint: tracesUrl(c.endpoint), headers: c.headers };
  }
  const full = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!full && !base) return undefined;
  return { endpoint: full ? full : tracesUrl(base as string), headers: parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS) };
}

const tracesUrl = (endpoint: string) => (/\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, '')}/v1/traces`);

function parseHeaders(text: string | undefined): Record<string, string> | undefined {
  if (!text) return undefined;
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i > 0) out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}
