/**
 * The fields a diff could not compare (`uncomparable`), kept per connection: its name and the list of
 * its masked paths, one list shared by every connection masked alike. An environment of 100 000
 * connections with a masked password holds 100 000 names and one list `["/password"]`, not 100 000
 * `{name, path}` objects that live until the end of the run (each copied by the young generation's
 * collections and marked by every full one). The `{name, path}` items are made one at a time by
 * whoever reads the list (the renderers, the JSON writer) and dropped at once. Pure.
 */
import { compareNames } from '../connections/match.js';
import type { UncomparableField, UncomparableFields } from './types.js';

/** Masked fields in the order added (or in name order after {@link MaskedFields.sortByName}). */
export class MaskedFields implements UncomparableFields {
  /** Fields listed: the sum of the lengths of the paths lists. */
  length = 0;
  private names: string[] = [];
  private pathLists: (readonly string[])[] = [];
  /** Each distinct list of paths, by its JSON text. */
  private readonly lists = new Map<string, readonly string[]>();

  /** The masked paths of one connection, in its document order; nothing for none. */
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

  /**
   * Put the connections in name order (each connection added once: its paths stay together, in
   * their document order).
   */
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

  /** What `JSON.stringify` writes: the `{name, path}` items, as an array of them would be written. */
  toJSON(): UncomparableField[] {
    return [...this];
  }
}

function isSameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((path, i) => path === b[i]);
}
