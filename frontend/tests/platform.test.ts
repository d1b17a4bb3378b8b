import { describe, expect, it } from 'vitest';
import { followCompletion, postForm } from '../src/platform';

describe('followCompletion', () => {
  it('goes to the completion page the server names', () => {
    const visited: string[] = [];
    const url = 'https://app.prolific.com/submissions/complete?cc=ABC123';
    expect(followCompletion({ redirect_url: url }, (u) => visited.push(u))).toBe(true);
    expect(visited).toEqual([url]);
  });

  it('stays without one, and never follows a script address', () => {
    const visited: string[] = [];
    for (const result of [null, {}, { redirect_url: null }, { redirect_url: 'javascript:alert(1)' }]) {
      expect(followCompletion(result, (u) => visited.push(u))).toBe(false);
    }
    expect(visited).toEqual([]);
  });
});

describe('followCompletion with a platform form', () => {
  it('posts MTurk’s externalSubmit form, over https only', () => {
    const posted: unknown[] = [];
    const form = { url: 'https://workersandbox.mturk.com/mturk/externalSubmit', fields: { assignmentId: 'A1' } };
    expect(followCompletion({ external_submit: form }, () => undefined, (f) => posted.push(f))).toBe(true);
    expect(posted).toEqual([form]);
    const plain = { url: 'http://www.mturk.com/mturk/externalSubmit', fields: {} };
    expect(followCompletion({ external_submit: plain }, () => undefined, (f) => posted.push(f))).toBe(false);
    expect(posted).toHaveLength(1);
  });

  it('builds a hidden-field form aimed at the platform', () => {
    const submitted: HTMLFormElement[] = [];
    const original = HTMLFormElement.prototype.submit;
    HTMLFormElement.prototype.submit = function (this: HTMLFormElement) {
      submitted.push(this);
    };
    try {
      postForm({ url: 'https://www.mturk.com/mturk/externalSubmit', fields: { assignmentId: 'A<1>' } });
    } finally {
      HTMLFormElement.prototype.submit = original;
    }
    expect(submitted).toHaveLength(1);
    const [form] = submitted;
    expect(form.method).toBe('post');
    expect(form.action).toBe('https://www.mturk.com/mturk/externalSubmit');
    const input = form.querySelector('input[name="assignmentId"]') as HTMLInputElement;
    expect(input.type).toBe('hidden');
    expect(input.value).toBe('A<1>');
  });
});
