/**
 * The metrics' text exposition spells a NaN sample `NaN`, as the Prometheus text format does (its
 * values are Go floats: "NaN", "+Inf", "-Inf"); prom-client writes `Nan`, which parsers refuse.
 */
import t from 'tap';
import { spellNaN } from '../../lib/metrics/prometheus.ts';

t.equal(
  spellNaN('# TYPE nodejs_eventloop_lag_mean_seconds gauge\nnodejs_eventloop_lag_mean_seconds Nan\nup{job="Nan"} 1\nx_total 3\n'),
  '# TYPE nodejs_eventloop_lag_mean_seconds gauge\nnodejs_eventloop_lag_mean_seconds NaN\nup{job="Nan"} 1\nx_total 3\n',
  'a sample of value Nan written NaN; labels and other samples as they were',
);
