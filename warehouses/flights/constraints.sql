-- Primary keys, foreign keys and join indexes, added after the bulk load (faster than row by row).
ALTER TABLE airlines ADD PRIMARY KEY (carrier);
ALTER TABLE airports ADD PRIMARY KEY (faa);
ALTER TABLE planes   ADD PRIMARY KEY (tailnum);
ALTER TABLE weather  ADD PRIMARY KEY (origin, time_hour);
ALTER TABLE flights  ADD PRIMARY KEY (flight_id);

-- Only the references the data keeps. Not declared, because the data breaks them: flights.tailnum ->
-- planes (722 tail numbers of 50,094 flights are not in planes), flights.dest -> airports (BQN, PSE, SJU
-- and STT, 7,602 flights, are not in airports) and flights (origin, time_hour) -> weather (1,556 flights
-- are in hours without an observation).
ALTER TABLE flights ADD FOREIGN KEY (carrier) REFERENCES airlines (carrier);
ALTER TABLE flights ADD FOREIGN KEY (origin) REFERENCES airports (faa);
ALTER TABLE weather ADD FOREIGN KEY (origin) REFERENCES airports (faa);

-- weather (origin, time_hour) is its primary key's index.
CREATE INDEX ON flights (carrier);
CREATE INDEX ON flights (origin, time_hour);
CREATE INDEX ON flights (dest);
CREATE INDEX ON flights (tailnum);
CREATE INDEX ON flights (flight_date);
