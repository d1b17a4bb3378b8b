/**
 * Side words for a stacked layout. The original comparative buckets name the dialogues by
 * screen side ("Dialogue 1 (left)"); on a narrow screen the two dialogues are stacked, one
 * above the other, so the page shows "(above)" / "(below)" instead. Display only: the stored
 * answer keeps the bucket's option text.
 */
import { useEffect, useMemo, useState } from 'react';

/** The width at which styles.css stacks side-by-side panels (`.compare`, `.split`). */
export const STACKED_QUERY = '(max-width: 760px)';

export function stackedSides(text: string): string {
  return text.replace(/\(left\)/gi, '(above)').replace(/\(right\)/gi, '(below)');
}

/** Whether side-by-side panels are stacked now (follows the window's width). */
export function useStacked(): boolean {
  const query = useMemo(() => (typeof window.matchMedia === 'function' ? window.matchMedia(STACKED_QUERY) : null), []);
  const [stacked, setStacked] = useState(() => query?.matches ?? false);
  useEffect(() => {
    if (!query) return;
    const onChange = () => setStacked(query.matches);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, [query]);
  return stacked;
}
