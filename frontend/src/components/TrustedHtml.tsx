/**
 * Requester-authored HTML (task description, bucket instructions). This is the only place the page
 * renders HTML; dialogue, persona and bot text are always React text nodes.
 */
export function TrustedHtml({ html, className }: { html: string; className?: string }) {
  return <div className={className} dangerouslySetInnerHTML={{ __html: html }} />;
}
