/** Appends `value` to the list `map` keeps under `key` (in place: a copy per add would cost the square of a group's size). */
export function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
