import Assembler from 'stream-json/Assembler.js';

type SaveValue = (this: Assembler, value: unknown) => void;

/**
 * A stream-json streamer whose objects keep a `"__proto__"` key as data, as `JSON.parse` does.
 * stream-json assembles objects by assignment, so such a key would set the object's prototype (or
 * be dropped, for a text value): a field a person named so would vanish without a word.
 */
export function keepingProtoKeys<T extends object>(streamer: T): T {
  const assembler = (streamer as { _assembler?: unknown })._assembler;
  if (!(assembler instanceof Assembler))
    throw new Error('stream-json changed: its streamers no longer assemble values with an Assembler.');
  const save = (assembler as unknown as { _saveValue: SaveValue })._saveValue;
  const saveOwn: SaveValue = function (value) {
    if (!this.done && this.key === '__proto__' && !Array.isArray(this.current)) {
      Object.defineProperty(this.current, '__proto__', {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.key = null;
    } else save.call(this, value);
  };
  // `stringValue` is an alias of `_saveValue`, and the other values and closing brackets call it.
  Object.assign(assembler, { _saveValue: saveOwn, stringValue: saveOwn });
  return streamer;
}
