import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ChangeSubject } from './change-subject.js';

// The same script against RxJS's Subject and ChangeSubject: what each observer saw must match.
function script(subject: Subject<number>): string[] {
  const seen: string[] = [];
  const a = subject.subscribe((v) => {
    seen.push(`a${v}`);
    // Subscribing or unsubscribing while a value is being delivered takes effect from the next one.
    if (v === 1) subject.subscribe((w) => seen.push(`late${w}`));
    if (v === 2) b.unsubscribe();
  });
  const b = subject.subscribe((v) => seen.push(`b${v}`));
  subject.next(1);
  subject.next(2);
  subject.next(3);
  a.unsubscribe();
  subject.next(4);
  subject.complete();
  subject.next(5);
  subject.subscribe({ complete: () => seen.push('completed') });
  return seen;
}

describe('ChangeSubject', () => {
  it("delivers as RxJS's Subject does, through subscribes and unsubscribes during delivery and after complete", () => {
    const expected = script(new Subject<number>());
    expect(expected).toContain('late2');
    expect(script(new ChangeSubject<number>())).toEqual(expected);
  });

  it('passes values through operators, and refuses next once unsubscribed', () => {
    const subject = new ChangeSubject<number>();
    const seen: number[] = [];
    subject.asObservable().subscribe((v) => seen.push(v * 10));
    subject.next(2);
    expect(seen).toEqual([20]);
    subject.unsubscribe();
    expect(() => subject.next(3)).toThrow(/unsubscribed/);
  });
});
