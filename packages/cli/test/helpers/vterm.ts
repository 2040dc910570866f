/**
 * A small terminal emulator for tests: replays what a program wrote to a TTY (text, CR/LF,
 * cursor up `ESC[nA`, erase below `ESC[J`, erase line `ESC[K`; colours ignored) and returns the
 * screen that results, one string per row, as a person would see it at the end.
 */
export function replay(output: string): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (rows[row] ??= []);
  for (let i = 0; i < output.length; i++) {
    const ch = output[i] as string;
    if (ch === '\u001b' && output[i + 1] === '[') {
      const m = /^\u001b\[([0-9;?]*)([A-Za-z])/.exec(output.slice(i));
      if (m) {
        const n = Number(m[1] || '0');
        if (m[2] === 'A') row = Math.max(0, row - Math.max(1, n));
        else if (m[2] === 'J' && n === 0) {
          line().length = col;
          rows.length = row + 1;
        } else if (m[2] === 'K') line().length = col;
        i += m[0].length - 1;
        continue;
      }
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row++;
      col = 0;
      line();
    } else {
      const l = line();
      while (l.length < col) l.push(' ');
      l[col++] = ch;
    }
  }
  for (let r = 0; r < rows.length; r++) rows[r] ??= [];
  const screen = rows.map((r) => r.join('').trimEnd());
  while (screen.length > 0 && screen[screen.length - 1] === '') screen.pop();
  return screen;
}
