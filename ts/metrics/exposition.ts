/**
 * The Prometheus text format, version 0.0.4: `# HELP` and `# TYPE` lines, then one sample
 * per line, families in name order (as Meilisearch's exporter writes them).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = ReadonlyArray<readonly [string, string]>;

export const CONTENT_TYPE = 'text/plain; version=0.0.4';

interface Family {
  type: MetricType;
  help: string;
  samples: string[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export function labelText(labels: Labels): string {
  return labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

/** Builds one exposition: declare a family, add its samples, render. */
export class Exposition {
  private readonly families = new Map<string, Family>();

  family(name: string, type: MetricType, help: string): this {
    if (!this.families.has(name)) this.families.set(name, { type, help, samples: [] });
    return this;
  }

  /** A sample of family `family`; `suffix` names histogram series (`_bucket`, `_sum`, `_count`). */
  sample(family: string, labels: Labels, value: number, suffix = ''): this {
    const f = this.families.get(family);
    if (!f) throw new Error(`metric family ${family} was not declared`);
    f.samples.push(`${family}${suffix}${labelText(labels)} ${formatValue(value)}`);
    return this;
  }

  render(): string {
    const names = [...this.families.keys()].sort();
    let out = '';
    for (const name of names) {
      const f = this.families.get(name)!;
      out += `# HELP ${name} ${f.help}\n# TYPE ${name} ${f.type}\n`;
      for (const s of f.samples) out += `${s}\n`;
    }
    return out;
  }
}
