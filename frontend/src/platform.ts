/** Back to the crowd platform after a submit (docs/worker-ui.md, "Completion page"). */

/**
 * Go to the platform's completion page when the server names one (`redirect_url`, e.g.
 * Prolific's); the completion page with the code shows meanwhile and stays if the browser
 * stays. Only http(s) addresses are followed.
 */
export function followCompletion(
  result: { redirect_url?: string | null } | null | undefined,
  navigate: (url: string) => void = (url) => window.location.assign(url),
): boolean {
  const url = result?.redirect_url;
  if (!url || !/^https?:\/\//i.test(url)) return false;
  navigate(url);
  return true;
}
