"""The MongoDB versions the site supports, and the server version each feature it uses needs.

The site supports **MongoDB 8.0 or later** (`SUPPORTED`): 5.0 brought ``$getField`` and
``$setField``, which the entries' update pipelines are built of, and 8.0 the client-level
``bulkWrite`` command (pymongo's `MongoClient.bulk_write`: writes to several collections in one
command). Older servers are past their end of life anyway.

`INTRODUCED` is the one table of what the code may send: each aggregation stage and expression,
query and update operator, system variable and command by name, with the version of MongoDB
that first had it (for a name with several meanings, such as ``$set`` the update operator and
the stage, the newest). `tests/test_mongo_versions.py` reads every one the code names and fails
on one that needs a server newer than `SUPPORTED`, and on one this table does not know: a new one
is added here, with its version, on purpose.
"""

from __future__ import annotations

Version = tuple[int, int]

SUPPORTED: Version = (8, 0)

INTRODUCED: dict[str, Version] = {
    # Query operators.
    "$eq": (3, 0),
    "$ne": (1, 0),
    "$gt": (1, 0),
    "$gte": (1, 0),
    "$lt": (1, 0),
    "$lte": (1, 0),
    "$in": (3, 4),  # the expression; the query operator is older
    "$nin": (1, 0),
    "$and": (2, 0),
    "$or": (1, 6),
    "$not": (1, 0),
    "$exists": (1, 0),
    "$regex": (2, 0),
    "$type": (3, 4),  # the expression
    "$all": (1, 0),
    "$elemMatch": (1, 4),
    "$size": (2, 6),  # the expression
    "$expr": (3, 6),
    # Update operators and their modifiers.
    "$set": (4, 2),  # the stage; the update operator is older
    "$unset": (4, 2),  # the stage
    "$inc": (1, 0),
    "$push": (1, 0),
    "$pull": (1, 0),
    "$pullAll": (1, 0),
    "$addToSet": (1, 4),
    "$each": (2, 4),
    "$slice": (3, 2),  # the expression; the $push modifier is 2.4
    "$sort": (2, 4),  # the $push modifier; the stage is 2.2
    "$setOnInsert": (2, 4),
    "$min": (3, 2),  # the expression over an array; the update operator is 2.6
    "$max": (3, 2),
    "$rename": (1, 8),
    "$currentDate": (2, 6),
    # Aggregation stages.
    "$match": (2, 2),
    "$project": (2, 2),
    "$group": (2, 2),
    "$limit": (2, 2),
    "$skip": (2, 2),
    "$unwind": (2, 2),
    "$lookup": (3, 2),
    "$addFields": (3, 4),
    "$replaceRoot": (3, 4),
    "$replaceWith": (4, 2),
    "$count": (3, 4),
    "$facet": (3, 4),
    "$merge": (4, 2),
    "$unionWith": (4, 4),
    "$setWindowFields": (5, 0),
    # Aggregation expressions.
    "$add": (2, 2),
    "$subtract": (2, 2),
    "$multiply": (2, 2),
    "$divide": (2, 2),
    "$mod": (2, 2),
    "$floor": (3, 2),
    "$ceil": (3, 2),
    "$abs": (3, 2),
    "$cond": (2, 2),
    "$ifNull": (2, 2),
    "$switch": (3, 4),
    "$let": (2, 6),
    "$literal": (2, 6),
    "$map": (2, 6),
    "$filter": (3, 2),
    "$reduce": (3, 4),
    "$range": (3, 4),
    "$zip": (3, 4),
    "$arrayElemAt": (3, 2),
    "$concatArrays": (3, 2),
    "$indexOfArray": (3, 4),
    "$objectToArray": (3, 6),  # 3.4.4
    "$arrayToObject": (3, 6),  # 3.4.4
    "$mergeObjects": (3, 6),
    "$setUnion": (2, 6),
    "$sum": (3, 2),  # over an array
    "$first": (4, 4),  # of an array; the accumulator is older
    "$last": (4, 4),
    "$toInt": (4, 0),
    "$toLong": (4, 0),
    "$convert": (4, 0),
    "$getField": (5, 0),
    "$setField": (5, 0),
    "$sortArray": (5, 2),
    # System variables.
    "$$ROOT": (2, 6),
    "$$CURRENT": (2, 6),
    "$$REMOVE": (3, 6),
    "$$NOW": (4, 2),
    "$$CLUSTER_TIME": (4, 2),
    "$$USER_ROLES": (7, 0),
    # Commands the code runs by name (`db.command(...)`), and the client-level bulk write.
    "ping": (1, 0),
    "fsync": (1, 0),
    "explain": (3, 0),
    "buildInfo": (1, 0),
    "serverStatus": (1, 0),
    "top": (1, 0),  # the contest day's account of the server's time (`loadtest/server_top.py`)
    "hello": (4, 4),
    "bulkWrite": (8, 0),
}
