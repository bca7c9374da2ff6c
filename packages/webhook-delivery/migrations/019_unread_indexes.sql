-- The deliveries' indexes of unfinished work that no statement reads since the queue (009).
--
-- Lease rounds, ordered lines and in-flight counts read `holdfast_delivery_queue`, which holds
-- every unfinished delivery and its lease; nothing reads these four on the history any more, yet
-- every partition carries them: a new delivery was written into `_due` (and, when ordered,
-- `_ordered`), and the planner weighed all four in every partition of every read of the
-- deliveries (a list without a time range plans over all of them). Leases live on the queue
-- rows, so `_endpoint_live` and `_ordered_in_flight` were empty; the queue's own unique index
-- (`holdfast_delivery_queue_line_in_flight`) keeps one delivery in flight per line. Kept:
-- `_endpoint_next`, which `queuedEventTypes` reads, and `_unfinished`, which retention asks of a
-- partition before dropping it. Dropping a partitioned index drops it from every partition.
drop index holdfast_deliveries_due;
drop index holdfast_deliveries_endpoint_live;
drop index holdfast_deliveries_ordered;
drop index holdfast_deliveries_ordered_in_flight;
