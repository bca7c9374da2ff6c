-- Dead deliveries counted through an index of their own.
--
-- `queueDepth`, and with it the Prometheus gauge `deliveries_dead` at every scrape, counts the
-- deliveries whose status is 'dead'. No index of `holdfast_deliveries` leads with the status (the
-- status sorts lead with the account), so the count read every history partition's heap whole:
-- a scrape cost what the history weighs. This partial index holds the dead ones alone, so the
-- count reads about as many index entries as there are dead letters, mostly without a heap visit
-- (a finished partition is all-visible once vacuumed). Built once over the existing history here,
-- and made on every partition attached later with the others.
create index holdfast_deliveries_dead on holdfast_deliveries (created_at) where status = 'dead';
