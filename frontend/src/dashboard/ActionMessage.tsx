/** The outcome of an action, shown where it happened (errors as alerts). */
export interface Outcome {
  ok: boolean;
  text: string;
}

export function ActionMessage({ outcome, id }: { outcome: Outcome | null; id?: string }) {
  if (!outcome) return null;
  return (
    <p id={id} className={outcome.ok ? 'action-ok' : 'form-error'} role={outcome.ok ? undefined : 'alert'}>
      {outcome.text}
    </p>
  );
}
