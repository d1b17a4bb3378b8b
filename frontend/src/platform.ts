/** Back to the crowd platform after a submit (docs/worker-ui.md, "Completion page"). */
import type { ExternalSubmit } from './api';

/**
 * Go to the platform's completion page when the server names one (`redirect_url`, e.g.
 * Prolific's), or post the platform's completion form (`external_submit`, MTurk's
 * externalSubmit); the completion page with the code shows meanwhile and stays if the browser
 * stays. Only http(s) addresses are followed, and forms go only to https.
 */
export function followCompletion(
  result: { redirect_url?: string | null; external_submit?: ExternalSubmit | null } | null | undefined,
  navigate: (url: string) => void = (url) => window.location.assign(url),
  post: (form: ExternalSubmit) => void = postForm,
): boolean {
  const url = result?.redirect_url;
  if (url && /^https?:\/\//i.test(url)) {
    navigate(url);
    return true;
  }
  const form = result?.external_submit;
  if (form && typeof form.url === 'string' && /^https:\/\//i.test(form.url)) {
    post(form);
    return true;
  }
  return false;
}

/** Post `fields` to `url` as a form (the page leaves for the platform's page). */
export function postForm({ url, fields }: ExternalSubmit): void {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = url;
  for (const [name, value] of Object.entries(fields ?? {})) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = String(value);
    form.appendChild(input);
  }
  document.body.appendChild(form);
  form.submit();
}

/** Only http(s) links are offered to the worker (a next unit's link comes from the server). */
export function isWebLink(url: string | null | undefined): url is string {
  return !!url && /^https?:\/\//i.test(url);
}
