-- The plans of the statements the queue's triggers run on every delivery written, kept on the
-- indexes whatever the statistics say.
--
-- `holdfast_delivery_queued` (the trigger that keeps a delivery's queue row) and
-- `holdfast_queue_wake` (which it calls) look rows up by key: the delivery's queue row, the
-- endpoint's turn. A session keeps the plan each statement of a function got the first times it
-- ran; made while the queue table was empty and analyzed so (an idle deployment, where
-- autovacuum analyzes it empty), that plan is a sequential scan, and the session kept scanning
-- the whole queue for every delivery it wrote until the next ANALYZE of the table, each write
-- slower than the last (the package README's migration list has the figures). As the hot functions already do (see the package README's "Plans"), the
-- functions' own settings now rule out sequential and bitmap scans, and JIT, which a disabled
-- plan's cost would otherwise set off. Altering a function makes every session plan it again.
alter function holdfast_delivery_queued() set enable_seqscan = off;
alter function holdfast_delivery_queued() set enable_bitmapscan = off;
alter function holdfast_delivery_queued() set jit = off;
alter function holdfast_queue_wake(text, timestamptz) set enable_seqscan = off;
alter function holdfast_queue_wake(text, timestamptz) set enable_bitmapscan = off;
alter function holdfast_queue_wake(text, timestamptz) set jit = off;
-- The limit's increase after each batch of outcomes reads pacing rows by key, as rounds do.
alter function holdfast_pace_outcomes(integer, text[], integer[]) set enable_seqscan = off;
alter function holdfast_pace_outcomes(integer, text[], integer[]) set enable_bitmapscan = off;
