// The package ships no types: the shape of what it returns, as its README documents it.
declare module 'parse-prometheus-text-format' {
  export interface Sample {
    readonly labels?: Record<string, string>;
    readonly value?: string;
    readonly buckets?: Record<string, string>;
    readonly count?: string;
    readonly sum?: string;
  }
  export interface Family {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
