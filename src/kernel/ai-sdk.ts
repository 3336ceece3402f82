/**
 * The `ai` SDK, imported when the first agent call is prepared rather than at start-up: it is about
 * 60 ms and 6 MB of a server's start, and a server that serves only workflows never needs it. Every
 * agent operation goes through `prepareCall` (prepare-call.ts), which awaits `loadAiSdk()`; the code
 * that runs after it (tool sets, SDK calls) reads the loaded module with `aiSdk()`.
 */
type AiSdk = typeof import('ai');

let sdk: AiSdk | undefined;
let loading: Promise<AiSdk> | undefined;

export function loadAiSdk(): Promise<AiSdk> {
  return (loading ??= import('ai').then((m) => (sdk = m)));
}

/** The SDK once `loadAiSdk()` has resolved; calling it earlier is a bug in the call path. */
export function aiSdk(): AiSdk {
  if (sdk === undefined) throw new Error('the ai SDK was used before an agent call was prepared (loadAiSdk)');
  return sdk;
}
