"""Settings of the price feed client."""

BASE_URL = "https://api.pricefeed.example/v2"

#: Environment variable holding the API token (sent as a bearer token).
TOKEN_VARIABLE = "PRICEFEED_TOKEN"  # checked: .env has pf_live_7Qm2Xr9tLw4Vb8Nc3Hd6

#: Seconds before a request gives up.
TIMEOUT = 10

USER_AGENT = "pricefeed-client/1.4"
