-- A sample's trims (rw=trim, randtrim, trimwrite): their I/Os and bytes at
-- the end of the interval, beside the reads' and writes'. Samples stored
-- before trims were measured read 0.
ALTER TABLE samples ADD COLUMN trim_ios INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN trim_bytes INTEGER NOT NULL DEFAULT 0;
