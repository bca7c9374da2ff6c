// A statement is built once, as a tagged template holds it (text pieces around arguments), and
// rendered at the end as text with `$1..$n` and positional values, what every `Db` runs. The
// caller's own trusted condition (text with its own `$n` values) is a hole filled in at
// rendering, its values renumbered after those before it.

/** A value sent as a parameter, never as text. */
export class Param {
  readonly value: unknown;
  constructor(value: unknown) {
    this.value = value;
  }
}

/** A piece the caller wrote in code, in its driver's own form, filled in when rendering. */
export class Hole<H> {
  readonly value: H;
  constructor(value: H) {
    this.value = value;
  }
}

/** What a statement's text pieces surround. */
export type Arg<H> = Param | Hole<H> | Statement<H>;

/** SQL text with arguments between its pieces: `strings.length === args.length + 1`. */
export class Statement<H> {
  readonly strings: readonly string[];
  readonly args: readonly Arg<H>[];
  constructor(strings: readonly string[], args: readonly Arg<H>[]) {
    this.strings = strings;
    this.args = args;
  }
}

/** A statement from a template: `statement\`${a} > ${new Param(v)}\``. */
export function statement<H>(strings: readonly string[], ...args: Arg<H>[]): Statement<H> {
  return new Statement([...strings], args);
}

/** Trusted text from code, with no arguments. */
export function raw<H>(text: string): Statement<H> {
  return new Statement([text], []);
}

/** The parts joined by `separator` (text). */
export function join<H>(parts: readonly Arg<H>[], separator: string): Statement<H> {
  if (parts.length === 0) return raw('');
  const strings = [''];
  for (let i = 1; i < parts.length; i += 1) strings.push(separator);
  strings.push('');
  return new Statement(strings, parts);
}

/** The statement with nested statements spliced in: text pieces around parameters and holes. */
function flatten<H>(root: Statement<H>): { strings: string[]; args: (Param | Hole<H>)[] } {
  const strings: string[] = [''];
  const args: (Param | Hole<H>)[] = [];
  const walk = (node: Statement<H>) => {
    node.strings.forEach((piece, i) => {
      strings[strings.length - 1] += piece;
      const arg = node.args[i];
      if (arg === undefined) return;
      if (arg instanceof Statement) walk(arg);
      else {
        args.push(arg);
        strings.push('');
      }
    });
  };
  walk(root);
  return { strings, args };
}

/** Trusted text from code with its own `$1..$n` values: `{ text: 'account_id = $1', values: [account] }`. */
export interface TextCondition {
  readonly text: string;
  readonly values?: readonly unknown[];
}

/** For any `Db`: text with `$1..$n`, a hole's own `$n` renumbered after the values before it. */
export function toText(root: Statement<TextCondition>): { text: string; values: unknown[] } {
  const { strings, args } = flatten(root);
  const values: unknown[] = [];
  let text = strings[0] ?? '';
  args.forEach((arg, i) => {
    if (arg instanceof Param) {
      values.push(arg.value);
      text += `$${values.length}`;
    } else {
      const offset = values.length;
      values.push(...(arg.value.values ?? []));
      text += arg.value.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    }
    text += strings[i + 1] ?? '';
  });
  return { text, values };
}
