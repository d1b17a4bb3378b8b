import { useId } from 'react';
import { isIdentifierKey, questionLabel, type Show } from '../display';
import { answersOf, isCheckbox, isPlainObject, isShown, questionsOf, type TreePath } from '../tree';
import type { TreeValue, TurnContext } from '../types';

export interface TreeHandlers {
  onRadio: (path: TreePath, question: string, answer: string) => void;
  onCheckbox: (path: TreePath, question: string, answer: string, checked: boolean) => void;
}

/** "None of these" for checkbox questions: confirmed by the worker, not assumed. */
export interface NoneOfThese {
  isConfirmed: (path: TreePath, question: string) => boolean;
  onChange: (path: TreePath, question: string, confirmed: boolean) => void;
}

export interface HelpLink {
  /** Generated id of the instructions dialog. */
  dialogId: string;
  open: () => void;
}

interface Props extends TreeHandlers {
  spec: unknown;
  /** The value at this level of the tree. */
  value: TreeValue | undefined;
  path?: TreePath;
  turn: TurnContext;
  show: Show;
  help?: HelpLink | null;
  /** Unique prefix for radio group names (generated, never question text). */
  nameBase?: string;
  noneOfThese?: NoneOfThese | null;
}

/** A question tree: one fieldset per shown question; nested questions appear under the chosen answer. */
export function TreeQuestions({
  spec,
  value,
  path = [],
  turn,
  show,
  help,
  nameBase,
  noneOfThese,
  onRadio,
  onCheckbox,
}: Props) {
  const generated = useId();
  const base = nameBase ?? generated;
  const level: TreeValue = value ?? {};
  return (
    <div className="tree">
      {questionsOf(spec).map(([q, qs], qi) => {
        if (!isShown(qs, level, turn)) return null;
        const checkbox = isCheckbox(qs);
        const chosen = isPlainObject(level[q]) ? level[q] : {};
        const name = `${base}-${qi}`;
        const label = questionLabel(q, show);
        const hiddenLegend = isIdentifierKey(q);
        const answers = answersOf(qs);
        const multi = checkbox && answers.length > 1;
        return (
          <div key={q} className={help ? 'question-wrap has-help' : 'question-wrap'}>
            {help && (
              <button
                type="button"
                className="link-button help-link"
                aria-haspopup="dialog"
                aria-controls={help.dialogId}
                aria-label="Help about this question"
                onClick={help.open}
              >
                Help
              </button>
            )}
            <fieldset className={checkbox ? 'question is-checkbox' : 'question'}>
              <legend className={hiddenLegend ? 'sr-only' : undefined}>{label}</legend>
              {multi && <p className="question-meta muted">Select all that apply.</p>}
              <ul className="options">
                {answers.map(([a, sub], ai) => {
                  const isChosen = Object.prototype.hasOwnProperty.call(chosen, a);
                  const subPath: TreePath = [...path, [q, a] as const];
                  return (
                    <li key={a} className={isChosen ? 'option is-checked' : 'option'}>
                      <label>
                        <input
                          type={checkbox ? 'checkbox' : 'radio'}
                          name={name}
                          value={String(ai)}
                          checked={isChosen}
                          onChange={(e) =>
                            checkbox ? onCheckbox(path, q, a, e.currentTarget.checked) : onRadio(path, q, a)
                          }
                        />
                        <span>{show(a)}</span>
                      </label>
                      {isChosen && questionsOf(sub).length > 0 && (
                        <div className="subquestions">
                          <TreeQuestions
                            spec={sub}
                            value={chosen[a]}
                            path={subPath}
                            turn={turn}
                            show={show}
                            help={null}
                            nameBase={`${name}-${ai}`}
                            noneOfThese={noneOfThese}
                            onRadio={onRadio}
                            onCheckbox={onCheckbox}
                          />
                        </div>
                      )}
                    </li>
                  );
                })}
                {checkbox && noneOfThese && (
                  <li className="option is-none">
                    <label>
                      <input
                        type="checkbox"
                        checked={Object.keys(chosen).length === 0 && noneOfThese.isConfirmed(path, q)}
                        onChange={(e) => noneOfThese.onChange(path, q, e.currentTarget.checked)}
                      />
                      <span>None of these</span>
                    </label>
                  </li>
                )}
              </ul>
            </fieldset>
          </div>
        );
      })}
    </div>
  );
}
