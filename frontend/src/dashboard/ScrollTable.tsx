import { forwardRef, type ReactNode } from 'react';

type Props = {
  /** The region's name: its own text, or the id of the heading that names it. */
  label?: string;
  labelledBy?: string;
  /** Shown above the table; `captionHidden` keeps it for screen readers alone. */
  caption?: string;
  captionHidden?: boolean;
  className?: string;
  /** The header row's cells. */
  head: ReactNode;
  /** The body's rows. */
  children: ReactNode;
};

/** A data table that scrolls sideways on its own (at 375 px) and can be scrolled with the
 * keyboard: a focusable, named region around it. */
export const ScrollTable = forwardRef<HTMLDivElement, Props>(function ScrollTable(
  { label, labelledBy, caption, captionHidden = false, className, head, children },
  ref,
) {
  return (
    <div
      ref={ref}
      className="table-scroll"
      tabIndex={0}
      role="region"
      aria-label={label}
      aria-labelledby={labelledBy}
    >
      <table className={className ? `data ${className}` : 'data'}>
        {caption && <caption className={captionHidden ? 'sr-only' : undefined}>{caption}</caption>}
        <thead>
          <tr>{head}</tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
});
