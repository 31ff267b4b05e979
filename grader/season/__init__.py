"""The season's registries: accounts, the competition's calendar, requests, screening, disclosure."""
