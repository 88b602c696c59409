extension VoiceSound {
    /// First names that say she is a woman: common given names in English-speaking families that are given to girls
    /// far more often than to boys (names given to both — Alex, Jordan, Taylor, Sam, Casey, Morgan, Riley, Jamie,
    /// Charlie — are in neither list).
    static let femaleNames: Set<String> = [
        "abigail", "ada", "addison", "adeline", "adriana", "agnes", "aisha", "alana", "alexandra", "alexis", "alice", "alicia",
        "alina", "alison", "allison", "alyssa", "amanda", "amber", "amelia", "amy", "ana", "anastasia", "andrea", "angela",
        "angelina", "anita", "ann", "anna", "anne", "annie", "ariana", "ashley", "aubrey", "audrey", "ava", "barbara",
        "beatrice", "bella", "beth", "betty", "beverly", "bianca", "brenda", "brianna", "bridget", "brittany", "brooke",
        "camila", "carla", "carmen", "carol", "caroline", "catherine", "cecilia", "charlotte", "chelsea", "chloe", "christina",
        "christine", "cindy", "claire", "clara", "claudia", "cynthia", "daisy", "daniela", "deborah", "denise", "diana",
        "diane", "donna", "doris", "dorothy", "eleanor", "elena", "eliza", "elizabeth", "ella", "ellie", "eloise", "emily",
        "emma", "erica", "erin", "esther", "eva", "evelyn", "fatima", "fiona", "florence", "frances", "gabriela", "gabriella",
        "gemma", "georgia", "gloria", "grace", "gracie", "hailey", "hannah", "harriet", "hazel", "heather", "heidi", "helen",
        "holly", "ingrid", "irene", "isabel", "isabella", "isla", "ivy", "jacqueline", "jane", "janet", "janice", "jasmine",
        "jennifer", "jenny", "jessica", "jill", "joan", "joanna", "josephine", "joy", "joyce", "judith", "judy", "julia",
        "julie", "june", "karen", "kate", "katherine", "kathleen", "kathryn", "katie", "kayla", "kelly", "kimberly", "kylie",
        "laura", "lauren", "layla", "leah", "lena", "lily", "linda", "lisa", "lois", "lola", "lorraine", "louise", "lucia",
        "lucy", "luna", "lydia", "madeline", "madison", "maggie", "margaret", "maria", "marie", "marilyn", "martha", "mary",
        "maya", "megan", "melanie", "melissa", "mia", "michelle", "mila", "mildred", "molly", "monica", "nadia", "nancy",
        "naomi", "natalie", "natasha", "nicole", "nina", "nora", "olivia", "paige", "pamela", "patricia", "paula", "penelope",
        "phoebe", "priya", "rachel", "rebecca", "riya", "rosa", "rose", "ruby", "ruth", "samantha", "sandra", "sara", "sarah",
        "savannah", "scarlett", "sharon", "shirley", "sofia", "sophia", "sophie", "stella", "stephanie", "susan", "sylvia",
        "tamara", "teresa", "tiffany", "valerie", "vanessa", "victoria", "violet", "virginia", "wendy", "yasmin", "yvonne",
        "zoe", "zoey", "sue", "liz", "jen", "meg", "eve", "kay", "gwen", "ellen", "emilia", "ines", "mei", "anika", "ananya",
        "keisha", "tanya", "sonia", "sonya", "olga", "irina",
    ]

    /// First names that say he is a man, as `femaleNames` says she is a woman.
    static let maleNames: Set<String> = [
        "aaron", "abdul", "adam", "adrian", "ahmed", "aidan", "alan", "albert", "alexander", "ali", "andrew", "anthony",
        "antonio", "arthur", "austin", "benjamin", "bernard", "billy", "bob", "bobby", "bradley", "brandon", "brian", "bruce",
        "bryan", "caleb", "carl", "carlos", "charles", "christian", "christopher", "colin", "connor", "craig", "daniel",
        "darren", "david", "dennis", "derek", "diego", "dominic", "donald", "douglas", "dylan", "edward", "elijah", "eric",
        "ethan", "eugene", "evan", "felix", "frank", "fred", "gabriel", "gary", "george", "gerald", "gordon", "graham",
        "gregory", "harold", "harry", "henry", "howard", "hugo", "ian", "isaac", "ivan", "jack", "jacob", "jake", "james",
        "jason", "jeffrey", "jeremy", "jerry", "jesse", "joe", "joel", "john", "jonathan", "jose", "joseph", "joshua", "juan",
        "justin", "keith", "kenneth", "kevin", "kyle", "lawrence", "leo", "leon", "liam", "logan", "louis", "lucas", "luis",
        "luke", "malik", "marcus", "mark", "martin", "mason", "matthew", "michael", "miguel", "mike", "mohamed", "mohammed",
        "muhammad", "nathan", "neil", "nicholas", "noah", "oliver", "omar", "oscar", "owen", "patrick", "paul", "peter",
        "philip", "rahul", "ralph", "raymond", "richard", "robert", "roger", "ronald", "roy", "russell", "ryan", "samuel",
        "scott", "sean", "sebastian", "simon", "stanley", "stephen", "steven", "theo", "theodore", "thomas", "timothy", "tom",
        "tony", "tyler", "victor", "vincent", "walter", "wayne", "william", "zachary", "ben", "jim", "jimmy", "bill", "dan",
        "danny", "rob", "matt", "nick", "pete", "steve", "dave", "will", "ed", "ted", "max", "tim", "andy", "greg", "jeff",
        "ken", "larry", "ray", "ron", "don", "phil", "rick", "nate", "josh", "zach", "luca", "mateo", "arjun", "kenji",
    ]
}
