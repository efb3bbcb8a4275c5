/** The rules a webhook endpoint's URL follows, wherever it is set: at create (webhookUrl) or as a key's default. */

const WEBHOOK_URL_MAX = 2048;
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why `text` is not an acceptable webhookUrl, or null: https (http only to a local host, or with WEBHOOK_ALLOW_HTTP),
 * at most 2048 characters, no user or password in it (the service would send them with every delivery).
 */
export function webhookUrlProblem(text: string, allowHttp: boolean): string | null {
  if (text.length > WEBHOOK_URL_MAX) return `webhookUrl is too long (at most ${WEBHOOK_URL_MAX} characters)`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'webhookUrl must be an absolute https URL';
  }
  if (url.username || url.password) return 'webhookUrl must not carry a user name or password: authenticate the deliveries by their signature';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && (allowHttp || LOCAL_HOSTS.has(url.hostname))) return null;
  return url.protocol === 'http:' ? 'webhookUrl must use https (http is accepted only for localhost)' : 'webhookUrl must be an absolute https URL';
}
