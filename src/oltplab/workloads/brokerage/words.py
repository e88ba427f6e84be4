"""The brokerage's words, written for oltplab: people's names, towns and divisions, company
names, the 12 sectors and their 102 industries, streets, news words and the like.

The lists are short; the rows combine them (a name is a start and an end, a company is two
words and a legal form, a town a start and an end), so the generated text varies without long
lists. Every word is plain ASCII without tabs, newlines or backslashes, so that no value needs
escaping in COPY text. Pure data: the same on every machine, no generator is seeded here.
"""

from __future__ import annotations

_GIVEN_STARTS = ("Al", "Bel", "Cal", "Dor", "El", "Fen", "Gal", "Hal", "Is", "Jor", "Kel",
                 "Lor", "Mar", "Nor", "Or", "Per", "Quin", "Ros", "Sel", "Tam", "Ul", "Val",
                 "Wil", "Yar")
_GIVEN_ENDS = ("a", "en", "ic", "ia", "o", "yn", "ette", "ius", "ard", "ine")
_FAMILY_STARTS = ("Ash", "Black", "Brook", "Cald", "Dun", "East", "Fair", "Glen", "Hart",
                  "Hol", "Kings", "Lang", "Mill", "North", "Oak", "Pen", "Ray", "Stan",
                  "Thorn", "Under", "Vance", "West", "Whit", "Wood", "York")
_FAMILY_ENDS = ("by", "croft", "dale", "field", "ford", "gate", "ham", "ley", "low", "mer",
                "more", "ridge", "son", "stone", "ton", "well")

#: 240 given names and 400 family names (start + end), each at most 12 letters.
FIRST_NAMES = tuple(s + e for s in _GIVEN_STARTS for e in _GIVEN_ENDS)
LAST_NAMES = tuple(s + e for s in _FAMILY_STARTS for e in _FAMILY_ENDS)

_TOWN_STARTS = ("Amber", "Bay", "Cedar", "Clear", "Copper", "Deer", "Elm", "Fox", "Gold",
                "Green", "Hazel", "Iron", "Lake", "Maple", "Mill", "New", "Old", "Pine",
                "Red", "River", "Rock", "Salt", "Silver", "Spring", "Stone", "Sun", "Swan",
                "Willow", "Wolf", "Winter")
_TOWN_ENDS = ("bridge", "brook", "bury", "dale", "field", "ford", "haven", "hill", "mouth",
              "port", "ton", "ville")
#: 360 towns.
TOWNS = tuple(s + e for s in _TOWN_STARTS for e in _TOWN_ENDS)

#: The divisions (zc_div) the zip codes fall in, and the 20 nations of the national taxes.
DIVISIONS = ("Arlen", "Bramor", "Castiva", "Delmont", "Eskara", "Farrow", "Galdene",
             "Hollis", "Ibera", "Jessan", "Korvale", "Lunara", "Marrin", "Nesset", "Ostrand",
             "Pellam", "Quarra", "Rovena", "Sallow", "Tarnel", "Umbria Vale", "Verran",
             "Wexmoor", "Yselle", "Zandor", "Aldmere", "Brisca", "Corwen", "Dunmar",
             "Evanor", "Fenwick", "Gorran", "Halvard", "Ilmar", "Jorvik Plains", "Kestrel",
             "Lorwen", "Mirabel", "Norwen", "Orlis", "Pradel", "Rastell", "Serrano",
             "Tolland", "Valden", "Westmark", "Ardent Coast", "High Moors", "Lower Reach",
             "Twin Lakes")
NATIONS = ("Aldoria", "Bregan", "Carvassa", "Dantor", "Elvaria", "Fonseca", "Graland",
           "Halvor", "Istria Nova", "Jerome Isles", "Kandor", "Lesmark", "Morrath", "Nivala",
           "Ostavia", "Pellora", "Quenmark", "Ruthania", "Solvay", "Tessaly")
COUNTRY = "United States"

#: Street names and kinds: an address line is a number, a name and a kind.
STREET_NAMES = ("Acorn", "Birch", "Bridge", "Canal", "Chapel", "Cherry", "Church", "College",
                "Dock", "Elm", "Fern", "Forest", "Garden", "Grove", "Harbor", "Heath",
                "Highland", "Hill", "Lake", "Laurel", "Linden", "Market", "Meadow", "Mill",
                "Mountain", "Oak", "Orchard", "Park", "Pine", "Pond", "Prospect", "Quarry",
                "Railroad", "Ridge", "River", "School", "Spring", "Summit", "Sunset",
                "Tower", "Union", "Valley", "Vine", "Walnut", "Water", "Willow")
STREET_KINDS = ("Street", "Avenue", "Road", "Lane", "Way", "Drive", "Court", "Place",
                "Boulevard", "Terrace")

#: A company's name: a word of each list and a legal form (46 x 36 x 8 = 13,248 names).
COMPANY_WORDS = ("Apex", "Arbor", "Atlas", "Beacon", "Birchwood", "Bluewater", "Cardinal",
                 "Cascade", "Cobalt", "Compass", "Crescent", "Crown", "Delta", "Eastgate",
                 "Ember", "Evergreen", "Falcon", "Frontier", "Granite", "Harbor", "Horizon",
                 "Ironwood", "Juniper", "Keystone", "Lantern", "Liberty", "Meridian",
                 "Monarch", "Northstar", "Oakridge", "Orion", "Pacifica", "Pinnacle",
                 "Quarry", "Redwood", "Riverbend", "Sable", "Sentinel", "Silverline",
                 "Summit", "Tidewater", "Trident", "Vanguard", "Vertex", "Westfield",
                 "Zenith")
COMPANY_TRADES = ("Analytics", "Biotech", "Brands", "Capital", "Chemicals", "Communications",
                  "Devices", "Dynamics", "Energy", "Engineering", "Foods", "Freight",
                  "Health", "Holdings", "Industries", "Instruments", "Labs", "Logistics",
                  "Materials", "Media", "Metals", "Mining", "Motors", "Networks", "Partners",
                  "Pharma", "Power", "Products", "Resources", "Retail", "Semiconductor",
                  "Software", "Solutions", "Systems", "Technologies", "Works")
COMPANY_FORMS = ("Inc.", "Corp.", "Ltd.", "Group", "Co.", "plc", "LLC", "Holdings AG")

#: Credit ratings (co_sp_rate, at most 4 characters), best first.
RATINGS = ("AAA", "AA+", "AA", "AA-", "A+", "A", "A-", "BBB+", "BBB", "BBB-", "BB+", "BB",
           "BB-", "B+", "B", "B-", "CCC+", "CCC", "CCC-", "CC", "C", "D")

#: The 12 sectors (sc_id, sc_name), each with its industries' names (102 in all, 8 or 9 a
#: sector; in_id is given in this order by market.industry_id).
SECTORS = (
    ("AG", "Agriculture and Food",
     ("Crop Farming", "Livestock Ranching", "Fisheries", "Grain Milling", "Dairy Products",
      "Beverages", "Packaged Foods", "Confectionery", "Tobacco Products")),
    ("MA", "Materials and Mining",
     ("Gold Mining", "Copper Mining", "Coal Mining", "Steel Mills", "Aluminum Smelting",
      "Timber", "Paper and Pulp", "Cement", "Specialty Chemicals")),
    ("BU", "Building and Property",
     ("Homebuilding", "Commercial Construction", "Building Materials",
      "Engineering Services", "Property Development", "Property Management",
      "Office Property Trusts", "Residential Property Trusts")),
    ("CG", "Consumer Goods",
     ("Apparel", "Footwear", "Household Appliances", "Furniture", "Toys and Games",
      "Cosmetics", "Jewelry and Watches", "Sporting Goods", "Personal Care Products")),
    ("EN", "Energy",
     ("Oil Exploration", "Oil Refining", "Natural Gas", "Pipelines", "Oilfield Services",
      "Solar Power", "Wind Power", "Uranium")),
    ("FI", "Finance and Insurance",
     ("Commercial Banking", "Savings Banks", "Investment Banking", "Asset Management",
      "Consumer Lending", "Life Insurance", "Property Insurance", "Reinsurance",
      "Securities Exchanges")),
    ("HE", "Health",
     ("Pharmaceuticals", "Biotechnology", "Medical Devices", "Hospitals",
      "Diagnostic Laboratories", "Health Plans", "Drug Wholesale", "Nursing Care",
      "Dental Supplies")),
    ("IN", "Industrial Machinery",
     ("Machine Tools", "Farm Equipment", "Construction Machinery", "Electrical Equipment",
      "Industrial Robots", "Pumps and Valves", "Aircraft Parts", "Defense Systems")),
    ("ME", "Media and Leisure",
     ("Broadcasting", "Film Studios", "Publishing", "Advertising Agencies", "Casinos",
      "Hotels and Resorts", "Restaurants", "Theme Parks", "Recorded Music")),
    ("RE", "Retail and Wholesale",
     ("Department Stores", "Grocery Chains", "Discount Stores", "Online Retail",
      "Car Dealers", "Pharmacy Chains", "Specialty Retail", "Wholesale Distribution")),
    ("TE", "Technology and Telecom",
     ("Semiconductors", "Computer Hardware", "Enterprise Software", "Consumer Software",
      "Information Services", "Networking Equipment", "Wireless Carriers",
      "Data Centers")),
    ("TR", "Transport and Logistics",
     ("Airlines", "Railroads", "Trucking", "Ocean Shipping", "Air Freight", "Car Makers",
      "Car Parts", "Warehousing")),
)
#: Industry names in in_id order, and each one's sector index.
INDUSTRIES = tuple(name for _, _, names in SECTORS for name in names)
INDUSTRY_SECTOR = tuple(k for k, (_, _, names) in enumerate(SECTORS) for _ in names)

#: The exchanges' names and descriptions, in reference.EXCHANGES order.
EXCHANGE_NAMES = ("New York Stock Exchange", "Nasdaq Stock Market", "American Stock Exchange",
                  "Pacific Exchange")
EXCHANGE_DESC = ("The largest floor-based market for listed shares",
                 "An electronic market of dealers quoting listed shares",
                 "A market for smaller companies, options and funds",
                 "A regional market on the west coast, open for the same hours")

#: News: the words of the article text, and of the sources and authors' bylines.
NEWS_WORDS = (
    "the", "a", "of", "and", "to", "in", "on", "for", "with", "as", "by", "at", "from",
    "after", "before", "while", "its", "their", "this", "that", "than", "more", "less",
    "company", "shares", "stock", "market", "markets", "investors", "analysts", "quarter",
    "revenue", "earnings", "profit", "loss", "sales", "growth", "outlook", "forecast",
    "guidance", "dividend", "buyback", "merger", "acquisition", "deal", "board", "chief",
    "executive", "officer", "director", "plant", "factory", "product", "launch", "demand",
    "supply", "prices", "costs", "margin", "margins", "debt", "bonds", "credit", "rating",
    "upgrade", "downgrade", "rose", "fell", "gained", "slipped", "climbed", "dropped",
    "surged", "steady", "higher", "lower", "percent", "points", "record", "year", "month",
    "week", "today", "yesterday", "report", "reported", "said", "expects", "expected",
    "announced", "plans", "plan", "new", "strong", "weak", "solid", "mixed", "cautious",
    "customers", "orders", "contract", "contracts", "backlog", "inventory", "capacity",
    "expansion", "region", "regional", "national", "global", "exports", "imports",
    "currency", "rates", "interest", "inflation", "economy", "consumer", "spending",
    "regulators", "approval", "review", "filing", "lawsuit", "settlement", "patent",
    "research", "development", "technology", "software", "energy", "transport", "retail",
    "bank", "lender", "insurer", "trading", "volume", "session", "close", "open", "gain",
    "decline", "rally", "selloff", "recovery", "estimate", "estimates", "beat", "missed",
    "target", "targets", "cash", "flow", "assets", "balance", "sheet", "jobs",
    "workers", "union", "wages", "strike", "shipments", "units", "segment", "division",
    "brand", "stores", "online", "partners", "partnership", "investment", "fund", "funds",
    "holders", "stake", "offer", "premium", "discount", "valuation", "shareholders",
    "meeting", "vote", "proposal", "chairman", "successor", "strategy", "restructuring",
    "savings", "cuts", "hiring", "headcount", "quarterly", "annual", "fiscal", "period",
    "compared", "rising", "falling", "remained", "unchanged", "about", "nearly", "roughly",
)
NEWS_SOURCES = ("The Daily Ledger", "Market Wire", "Harbor Street Journal", "Ticker Times",
                "The Trading Post", "Capital Review", "Exchange Bulletin", "The Bourse",
                "Quarterly Observer", "Financial Courier")
