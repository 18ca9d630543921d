import { compareNames } from '../connections/match.js';
import type { UncomparableField, UncomparableFields } from './types.js';

/**
 * A diff's `uncomparable`, kept as a name and one paths list shared by every connection masked alike:
 * 100 000 names and one `["/password"]`, not 100 000 `{name, path}` objects living to the end of the run
 * (bench/README.md, "Masked fields kept per connection"). Items are made as they are read.
 */
export class MaskedFields implements UncomparableFields {
  length = 0;
  private names: string[] = [];
  private pathLists: (readonly string[])[] = [];
  private readonly lists = new Map<string, readonly string[]>();

  /** The masked paths of one connection, in its document order. */
  add(name: string, paths: readonly string[]): void {
    if (paths.length === 0) return;
    // Neighbours are usually masked alike (connections of one type): the last list first.
    const last = this.pathLists[this.pathLists.length - 1];
    let list = last !== undefined && isSameList(last, paths) ? last : this.lists.get(JSON.stringify(paths));
    if (list === undefined) {
      list = [...paths];
      this.lists.set(JSON.stringify(paths), list);
    }
    this.names.push(name);
    this.pathLists.push(list);
    this.length += list.length;
  }

  /** Name order; a connection's paths stay in document order. */
  sortByName(): void {
    const { names, pathLists } = this;
    const order = Array.from(names.keys()).sort((x, y) => compareNames(names[x] ?? '', names[y] ?? ''));
    this.names = order.map((i) => names[i] ?? '');
    this.pathLists = order.map((i) => pathLists[i] ?? []);
  }

  *[Symbol.iterator](): Iterator<UncomparableField> {
    for (let i = 0; i < this.names.length; i++) {
      const name = this.names[i] ?? '';
      for (const path of this.pathLists[i] ?? []) yield { name, path };
    }
  }

  /** Written as the array of its `{name, path}` items. */
  toJSON(): UncomparableField[] {
    return [...this];
  }
}

function isSameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((path, i) => path === b[i]);
}
