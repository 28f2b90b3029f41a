"""The nycflights13 pack: flights departing New York City airports in 2013 (see ``pack.yaml``)."""
